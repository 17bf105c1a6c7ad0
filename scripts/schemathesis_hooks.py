"""Hooks for scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

An Idempotency-Key sent again with the same request gets the first answer again, by design: a
201 naming a resource the run may have deleted since. Schemathesis draws keys from a small space
("0", "00", ...) and bodies too, so its stateful checks would read that replay as "a resource
just created is not found". Every valid key it generates is made unique as it is drawn; invalid
ones (the negative cases) are sent as generated. The replay itself is tested by
IdempotencyTests.swift.
"""

import re
import uuid

import schemathesis

_VALID_KEY = re.compile(r"[!-~]{1,64}")


@schemathesis.hook
def map_headers(context, headers):
    for name, value in (headers or {}).items():
        if name.lower() == "idempotency-key" and isinstance(value, str) and _VALID_KEY.fullmatch(value):
            headers[name] = uuid.uuid4().hex
    return headers
