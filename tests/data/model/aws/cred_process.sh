#!/bin/sh
# credential_process for the kaproc test profile: temporary credentials with a
# session token, as AWS's credential_process protocol (Version 1) prints them.
echo "credential_process ran" >&2
cat <<'JSON'
{"Version": 1, "AccessKeyId": "ASIAKATESTTOKEN", "SecretAccessKey": "katest/secret+key",
 "SessionToken": "katest-session-token", "Expiration": "2099-01-01T00:00:00Z"}
JSON
