"""Both custom-resource Lambdas run the one shared CloudFormation reply (stacks/lambda_shared):
each packaged asset holds it as a file beside index.py, and index.py imports it as the Lambda
runtime imports a handler (the asset's root on the path, no package)."""

import json
import subprocess
import sys

import pytest

HANDLERS = {"ModelCache": "Custom::ModelWeights", "Endpoint": "Custom::ImageManifestCheck"}


def handler_asset(synth, stack: str, resource_type: str):
    """The asset directory of the Lambda behind the stack's custom resource."""
    template = synth.template(stack).to_json()
    (resource,) = [r for r in template["Resources"].values() if r["Type"] == resource_type]
    token = json.dumps(resource["Properties"]["ServiceToken"])
    functions = {name: r for name, r in template["Resources"].items() if r["Type"] == "AWS::Lambda::Function"}
    (function,) = [f for name, f in functions.items() if name in token]
    key = function["Properties"]["Code"]["S3Key"]
    return synth.outdir / f"asset.{key.removesuffix('.zip')}"  # staged once, in the outer assembly


@pytest.mark.parametrize("stack", sorted(HANDLERS))
def test_the_packaged_handler_carries_the_shared_reply_and_imports_it(default, stack):
    asset = handler_asset(default, stack, HANDLERS[stack])
    shared = asset / "cfn_response.py"
    assert shared.is_file() and not shared.is_symlink(), "the link is packaged as the file it points to"
    probe = "import index; print(index.respond.__module__)"
    result = subprocess.run([sys.executable, "-c", probe], cwd=asset, capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1"})
    assert result.returncode == 0 and result.stdout.strip() == "cfn_response", result.stderr
