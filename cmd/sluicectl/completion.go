package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// completion prints a shell completion script.
func (a *app) completion(args []string) error {
	if len(args) != 1 {
		return usagef("completion: expected bash or zsh")
	}
	switch args[0] {
	case "bash":
		_, err := fmt.Fprint(a.stdout, bashCompletion)
		return err
	case "zsh":
		_, err := fmt.Fprint(a.stdout, "#compdef sluicectl\n\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion)
		return err
	}
	return usagef("completion: unknown shell %q (expected bash or zsh)", args[0])
}

var (
	completionCommands = "apply get describe delete schedule commit discard explain watch config scenario bench bench-reads simulate whatif gentrace completion help"
	completionFlags    = "--server --cluster --token --token-file --tls --tls-ca --tls-cert --tls-key --tls-server-name --wait -o"
	completionKinds    = map[string]string{
		"get":        "nodes queues jobs tasks clusters",
		"describe":   "queue cluster",
		"delete":     "node queue job task priorityclass quota pdb hypernode cluster",
		"config":     "get set",
		"scenario":   "run",
		"completion": "bash zsh",
	}
)

// bashCompletion completes commands, kinds, flags, -o formats and file arguments. Object
// names are not completed (that would need a call to the server).
var bashCompletion = `# sluicectl completion; load with: source <(sluicectl completion bash)
_sluicectl() {
  local cur prev cmd i
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  cmd=""
  for ((i=1; i<COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      -*) ;;
      *) case "${COMP_WORDS[i-1]}" in
           --server|--cluster|--token|--token-file|--tls-ca|--tls-cert|--tls-key|--tls-server-name|--wait|-o|-f|--period|--count) ;;
           *) cmd="${COMP_WORDS[i]}"; break ;;
         esac ;;
    esac
  done
  case "$prev" in
    -o) COMPREPLY=($(compgen -W "table json yaml" -- "$cur")); return ;;
    -f|--token-file|--tls-ca|--tls-cert|--tls-key|--trace|--config|--out) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --server|--cluster|--token|--tls-server-name|--wait|--period|--count) return ;;
  esac
  if [[ "$cur" == -* ]]; then
    local extra=""
    case "$cmd" in
      apply) extra="-f --replace --with-config" ;;
      schedule) extra="--dry-run --commit" ;;
      delete) extra="--ignore-not-found" ;;
      watch) extra="--commit --period --takeover --count" ;;
      config) extra="-f --etag --force" ;;
      bench-reads) extra="--clients --duration --consistency --max-staleness" ;;
      simulate) extra="--trace --format --config --out --from-server --server-cluster --cores-per-node --procs-per-task --queue-map --failed --cancelled --memory-per-core --preemptable --time-scale --period --release-delay --interval --background-runtime --quiet" ;;
      whatif) extra="-f" ;;
      gentrace) extra="--jobs --nodes --cores-per-node --queues --load --seed" ;;
      bench) extra="--nodes --jobs --tasks-per-job --queues --shapes --config --seed --cycles --grpc --batch --cpuprofile --memprofile" ;;
    esac
    COMPREPLY=($(compgen -W "` + completionFlags + ` $extra" -- "$cur"))
    return
  fi
  if [[ -z "$cmd" ]]; then
    COMPREPLY=($(compgen -W "` + completionCommands + `" -- "$cur"))
    return
  fi
  case "$cmd" in
` + completionCases() + `  esac
}
complete -o default -F _sluicectl sluicectl
`

func completionCases() string {
	var b strings.Builder
	for _, cmd := range slices.Sorted(maps.Keys(completionKinds)) {
		if cmd == "scenario" {
			b.WriteString("    scenario) if [[ \"$prev\" == scenario ]]; then COMPREPLY=(run); else COMPREPLY=($(compgen -f -- \"$cur\")); fi ;;\n")
			continue
		}
		fmt.Fprintf(&b, "    %s) [[ \"$prev\" == %s ]] && COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n", cmd, cmd, completionKinds[cmd])
	}
	return b.String()
}
