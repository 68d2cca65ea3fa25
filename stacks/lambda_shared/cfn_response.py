"""The CloudFormation custom-resource reply, shared by the stacks' Lambda handlers.

Each handler's asset directory links this file in (a symlink the asset follows), so the one
copy here is what every Lambda runs: a PUT of the result to the pre-signed ResponseURL.
"""

from __future__ import annotations

import json
import urllib.request

HTTP_TIMEOUT_SECONDS = 60


def respond(event: dict, status: str, physical_id: str, *, data=None, reason=None) -> None:
    body = json.dumps({
        "Status": status,
        "Reason": (reason or "see the CloudWatch log stream")[:1000],
        "PhysicalResourceId": physical_id,
        "StackId": event["StackId"],
        "RequestId": event["RequestId"],
        "LogicalResourceId": event["LogicalResourceId"],
        "Data": data or {},
    }).encode()
    request = urllib.request.Request(event["ResponseURL"], data=body, method="PUT",
                                     headers={"Content-Type": "", "Content-Length": str(len(body))})
    with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as response:
        response.read()


def log(event: str, **fields) -> None:
    """One JSON line to CloudWatch."""
    print(json.dumps({"event": event, **fields}))
