#!/bin/sh
# Writes a batch file of the reference's `hdl-genericbatch` format on stdout: N CREATEs
# (default 10,000) under 20.500.12345, each with an HS_ADMIN, a URL and an EMAIL value,
# authenticated as the secret-key identity 300:20.500.12345/USER-SECKEY of the batch samples'
# starting state (fixtures/genericbatch/server/handles.json: HS_SECKEY "public-test-secret-1",
# an administrator of the prefix by 0.NA/20.500.12345's HS_ADMIN 101), as sample 08 does with
# 200 CREATEs. TAG goes into every handle (default `bench`), so that runs against one server
# do not collide.
#
# Usage: sh benches/batch-file.sh [N] [TAG] > FILE
set -eu
n=${1:-10000} tag=${2:-bench}
awk -v n="$n" -v tag="$tag" 'BEGIN {
    print "AUTHENTICATE SECKEY:300:20.500.12345/USER-SECKEY"
    print "public-test-secret-1"
    for (i = 1; i <= n; i++) {
        h = sprintf("20.500.12345/%s-%06d", tag, i)
        print ""
        print "CREATE " h
        print "100 HS_ADMIN 86400 1110 ADMIN 300:111111111111:20.500.12345/USER-SECKEY"
        printf "1 URL 86400 1110 UTF8 https://example.org/%s/%06d\n", tag, i
        printf "2 EMAIL 86400 1110 UTF8 %s-%06d@example.org\n", tag, i
    }
}'
