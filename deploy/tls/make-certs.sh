#!/usr/bin/env bash
# Makes a small PKI for sluiced's TLS (and mTLS) with openssl, into DIR:
#
#   ca.pem, ca-key.pem          a CA (10 years); give ca.pem to clients (sluicectl --tls-ca)
#   server.pem, server-key.pem  sluiced's certificate (sluiced --tls-cert/--tls-key), for
#                               localhost, 127.0.0.1, the Kubernetes Services of
#                               deploy/kubernetes and deploy/kubernetes-ha, and each NAME given
#   client.pem, client-key.pem  a client certificate (CN sluice-client), for mTLS
#                               (sluiced --client-ca ca.pem; sluicectl --tls-cert/--tls-key)
#
# Usage: deploy/tls/make-certs.sh DIR [NAME...]     (NAME: a DNS name or an IP address)
#
# For a test or a first deployment; a real one takes its certificates from its own CA.
# Existing files in DIR are kept (delete them to make new ones).
set -euo pipefail

[ $# -ge 1 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
dir=$1
shift
command -v openssl >/dev/null || { echo "make-certs.sh: openssl is not installed" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"

sans="DNS:localhost,IP:127.0.0.1,IP:::1,DNS:sluiced,DNS:sluiced.sluice.svc,DNS:sluiced.sluice.svc.cluster.local"
sans+=",DNS:*.sluiced-peers.sluice.svc,DNS:*.sluiced-peers.sluice.svc.cluster.local"
for n in "$@"; do
	if [[ $n =~ ^[0-9.]+$ || $n == *:* ]]; then sans+=",IP:$n"; else sans+=",DNS:$n"; fi
done

if [ ! -f ca.pem ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
		-subj "/CN=sluice-ca" -keyout ca-key.pem -out ca.pem 2>/dev/null
fi

# cert NAME CN EXTENSIONS
cert() {
	local name=$1 cn=$2 ext=$3
	[ -f "$name.pem" ] && return 0
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$cn" \
		-keyout "$name-key.pem" -out "$name.csr" 2>/dev/null
	openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 825 \
		-extfile <(printf '%s\n' "$ext") -out "$name.pem" 2>/dev/null
	rm -f "$name.csr"
}
cert server sluiced "subjectAltName=$sans
extendedKeyUsage=serverAuth
keyUsage=digitalSignature,keyEncipherment"
cert client sluice-client "extendedKeyUsage=clientAuth
keyUsage=digitalSignature,keyEncipherment"
chmod 0600 ./*-key.pem
echo "make-certs.sh: CA, server and client certificates in $PWD"
