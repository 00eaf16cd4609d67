// An example of using the Go client from a module of your own. The client's module path
// (github.com/sluice-sched/sluice) is not fetchable with go get: point it at a checkout
// with the replace below (or with "go work use" of the checkout), then go mod tidy.
// scripts/clients.sh tests it this way, from a copy outside the repository.
module example.com/sluice-roundtrip

go 1.26.8

require (
	github.com/sluice-sched/sluice v0.0.0
	google.golang.org/protobuf v1.36.13-0.20261016172727-e9ee2a76ab8e
)

require (
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20261012220534-4341edf3f941 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261012220534-4341edf3f941 // indirect
	google.golang.org/grpc v1.85.0 // indirect
)

replace github.com/sluice-sched/sluice => ../../..
