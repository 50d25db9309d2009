"""schemathesis hooks for scripts/api-fuzz (loaded through SCHEMATHESIS_HOOKS).

An `Idempotency-Key` of the documented form is made unique per request, as a client makes one per
new request: schemathesis' deterministic generation sends the same few values again and again,
and the second use of a key with another body is, rightly, 422 `/problems/idempotency-key-reused`.
Values of another form are left as generated, so negative cases still reach the server.

With a deployment key the header is left out: idempotency keys are kept per app, and a deployment
key belongs to none (422, "send it with one of the app's keys"), whatever the request.
"""
import os
import re
import uuid

import schemathesis

VALID_KEY = re.compile(r"^[\x21-\x7E]([\x20-\x7E]{0,253}[\x21-\x7E])?$")


@schemathesis.hook
def before_call(context, case, kwargs):
    headers = case.headers or {}
    if os.environ.get("FUZZ_ROLE") == "deployment":
        for source in (headers, kwargs.get("headers") or {}):
            for name in [name for name in source if name.lower() == "idempotency-key"]:
                del source[name]
        return
    for name in list(headers):
        if name.lower() == "idempotency-key" and isinstance(headers[name], str) and VALID_KEY.match(headers[name]):
            headers[name] = "fuzz-" + uuid.uuid4().hex
    for source in (kwargs.get("headers") or {},):
        for name in list(source):
            if name.lower() == "idempotency-key" and isinstance(source[name], str) and VALID_KEY.match(source[name]):
                source[name] = headers.get(name, "fuzz-" + uuid.uuid4().hex)
