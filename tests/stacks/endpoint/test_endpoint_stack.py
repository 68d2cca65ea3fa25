"""Endpoint: image asset, model, endpoint config, endpoint, autoscaling, alarms, outputs."""


import pytest

TOPIC = "arn:aws:sns:us-east-1:123456789012:tts-alarms"


def test_image_is_built_for_linux_amd64_from_container_and_the_shared_packages_only(default):
    [image] = default.assets("Endpoint")["dockerImages"].values()
    assert image["source"]["platform"] == "linux/amd64"
    assert image["source"]["dockerFile"] == "container/Dockerfile"
    staged = default.assembly_dir / image["source"]["directory"]
    top = {p.name for p in staged.iterdir()} - {".dockerignore"}
    assert top == {"container", "tts_text", "tts_formats"}  # the server imports these, never the client
    assert (staged / "container" / "Dockerfile").is_file()
    assert not list(staged.rglob("__pycache__"))


def test_model_reads_the_cached_prefix_uncompressed_with_network_isolation(default):
    model = default.one("Endpoint", "AWS::SageMaker::Model")
    assert model["EnableNetworkIsolation"] is True
    source = model["PrimaryContainer"]["ModelDataSource"]["S3DataSource"]
    assert (source["S3DataType"], source["CompressionType"]) == ("S3Prefix", "None")
    parts = source["S3Uri"]["Fn::Join"][1]
    assert parts[0] == "s3://kokoro-tts-models-"
    assert parts[-1] == "/hexgrad/Kokoro-82M/f3ff3571791e39611d31c381e3a41a3af07b4987/"  # S3Prefix wants the '/'
    assert model["PrimaryContainer"]["Environment"] == {
        "MODEL_DIR": "/opt/ml/model", "HF_HUB_OFFLINE": "1", "WS_MAX_PENDING_RESPONSES": "15",
        "ENGINE": "torch", "DEVICE": "cuda"}


@pytest.mark.parametrize("instance_type", ["ml.g4dn.xlarge", "ml.g5.xlarge", "ml.g6.2xlarge", "ml.g6e.8xlarge"])
def test_every_gpu_type_runs_pytorch_on_cuda_never_the_servers_auto_choice(synth, instance_type):
    """With DEVICE=auto a host whose GPU is unusable would serve from the CPU, ten times slower,
    and pass /ping; with DEVICE=cuda it fails /ping with the reason (tests/container/test_device.py)."""
    environment = synth(instanceType=instance_type).one("Endpoint", "AWS::SageMaker::Model")["PrimaryContainer"]["Environment"]
    assert (environment["ENGINE"], environment["DEVICE"]) == ("torch", "cuda")


def test_a_deploy_sets_any_server_setting_through_server_settings(synth):
    model = synth(serverSettings='{"PREEMPTION": "off", "TARGET_FIRST_AUDIO_MS": 1500, "LANGUAGES": "ja,en-us"}').one(
        "Endpoint", "AWS::SageMaker::Model")
    environment = model["PrimaryContainer"]["Environment"]
    assert {k: environment[k] for k in ("PREEMPTION", "TARGET_FIRST_AUDIO_MS", "LANGUAGES")} == {
        "PREEMPTION": "off", "TARGET_FIRST_AUDIO_MS": "1500", "LANGUAGES": "ja,en-us"}
    assert (environment["ENGINE"], environment["DEVICE"], environment["MODEL_DIR"]) == ("torch", "cuda", "/opt/ml/model")


def image_source(synth) -> dict:
    [image] = synth.assets("Endpoint")["dockerImages"].values()
    return image["source"]


def test_the_image_is_built_for_the_user_and_base_the_context_names(default, synth):
    assert image_source(default)["dockerBuildArgs"] == {"CONTAINER_USER": "tts"}  # the Dockerfile's base: ECR Public
    other = image_source(synth(containerUser="root", baseImage="123456789012.dkr.ecr.eu-west-1.amazonaws.com/hub/ubuntu:24.04"))
    assert other["dockerBuildArgs"] == {"CONTAINER_USER": "root",
                                        "BASE_IMAGE": "123456789012.dkr.ecr.eu-west-1.amazonaws.com/hub/ubuntu:24.04"}


def test_the_role_may_pull_the_image_before_the_endpoint_stack_exists(default):
    """The pull is granted in the foundation stack, on the repository the image is pushed to,
    not by a policy attached moments before CreateModel."""
    [image] = default.assets("Endpoint")["dockerImages"].values()
    [destination] = image["destinations"].values()
    [role] = [r["Properties"] for r in default.resources("Foundation", "AWS::IAM::Role").values()
              if r["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
              == {"Service": "sagemaker.amazonaws.com"}]
    [pull] = [s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"] if s["Sid"] == "PullModelImage"]
    assert pull["Resource"] == {"Fn::Sub": "arn:${AWS::Partition}:ecr:${AWS::Region}:${AWS::AccountId}:repository/"
                                           + destination["repositoryName"]}
    assert not default.resources("Endpoint", "AWS::IAM::Policy")
    assert "Foundation" in default.depends_on("Endpoint")


CPU = "ml.c7i.xlarge"  # 4 vCPUs


@pytest.fixture(scope="module")
def cpu(synth):
    return synth(instanceType=CPU)


def test_endpoint_config_defaults(default):
    [variant] = default.one("Endpoint", "AWS::SageMaker::EndpointConfig")["ProductionVariants"]
    assert variant["InstanceType"] == "ml.g5.xlarge"
    assert variant["InitialInstanceCount"] == 1
    assert variant["ContainerStartupHealthCheckTimeoutInSeconds"] == 600
    assert variant["ModelDataDownloadTimeoutInSeconds"] == 600
    assert variant["InferenceAmiVersion"] == "al2023-ami-sagemaker-inference-gpu-4-1"  # driver 580, CUDA 13


def test_cpu_instance_type_runs_the_same_image_without_gpu_settings(default, cpu):
    [variant] = cpu.one("Endpoint", "AWS::SageMaker::EndpointConfig")["ProductionVariants"]
    assert variant["InstanceType"] == CPU
    assert "InferenceAmiVersion" not in variant  # the AMI versions pinned here are GPU images
    model, gpu_model = cpu.one("Endpoint", "AWS::SageMaker::Model"), default.one("Endpoint", "AWS::SageMaker::Model")
    assert model["PrimaryContainer"]["Image"] == gpu_model["PrimaryContainer"]["Image"]
    assert model["PrimaryContainer"]["Environment"] == {
        "MODEL_DIR": "/opt/ml/model", "HF_HUB_OFFLINE": "1", "WS_MAX_PENDING_RESPONSES": "15",
        "ENGINE": "onnx", "DEVICE": "cpu"}  # the embedded int8 engine


def test_cpu_engine_can_be_pytorch_on_the_cached_weights(synth):
    model = synth(instanceType="ml.m7i.2xlarge", cpuEngine="torch").one("Endpoint", "AWS::SageMaker::Model")
    assert {k: model["PrimaryContainer"]["Environment"][k] for k in ("ENGINE", "DEVICE")} == {
        "ENGINE": "torch", "DEVICE": "cpu"}
    assert model["PrimaryContainer"]["ModelDataSource"]["S3DataSource"]["S3DataType"] == "S3Prefix"


def test_updates_keep_the_instance_count_autoscaling_chose(default, cpu):
    for synthesized in (default, cpu):
        endpoint = synthesized.one("Endpoint", "AWS::SageMaker::Endpoint")
        assert endpoint["RetainAllVariantProperties"] is True
        # Only the weight comes from the new config (one variant, always 1); DataCaptureConfig
        # is "not currently supported" in this list (API reference, VariantProperty).
        assert endpoint["ExcludeRetainedVariantProperties"] == [{"VariantPropertyType": "DesiredWeight"}]


def test_endpoint_rolls_back_a_deployment_on_error_alarms(default):
    endpoint = default.one("Endpoint", "AWS::SageMaker::Endpoint")
    assert endpoint["EndpointName"] == "kokoro-tts-endpoint"
    deployment = endpoint["DeploymentConfig"]
    assert deployment["BlueGreenUpdatePolicy"]["TerminationWaitInSeconds"] == 600
    alarms = default.resources("Endpoint", "AWS::CloudWatch::Alarm")
    rollback = {a["AlarmName"]["Ref"] for a in deployment["AutoRollbackConfiguration"]["Alarms"]}
    assert {alarms[a]["Properties"]["MetricName"] for a in rollback} == {"Invocation5XXErrors", "InvocationModelErrors"}


def tracked(synth) -> dict[str, dict]:
    """Target tracking configuration by metric name."""
    policies = synth.resources("Endpoint", "AWS::ApplicationAutoScaling::ScalingPolicy").values()
    configs = [p["Properties"]["TargetTrackingScalingPolicyConfiguration"] for p in policies]
    return {c["CustomizedMetricSpecification"]["MetricName"]: c for c in configs}


def test_autoscaling_target_uses_the_service_linked_role(default):
    target = default.one("Endpoint", "AWS::ApplicationAutoScaling::ScalableTarget")
    assert (target["MinCapacity"], target["MaxCapacity"]) == (1, 2)
    assert target["ResourceId"] == "endpoint/kokoro-tts-endpoint/variant/AllTraffic"
    assert "RoleARN" not in target  # Application Auto Scaling's service-linked role


def test_gpu_variant_scales_on_gpu_and_cpu_utilization_of_its_instances(default):
    policies = tracked(default)
    # 60 % of each processor; SageMaker sums utilization over them (ml.g5.xlarge: 1 GPU, 4 vCPUs).
    assert {m: p["TargetValue"] for m, p in policies.items()} == {"GPUUtilization": 60, "CPUUtilization": 240}
    for policy in policies.values():
        metric = policy["CustomizedMetricSpecification"]
        assert (metric["Namespace"], metric["Statistic"], metric["Unit"]) == (
            "/aws/sagemaker/Endpoints", "Average", "Percent")
        assert {d["Name"]: d["Value"] for d in metric["Dimensions"]} == {
            "EndpointName": "kokoro-tts-endpoint", "VariantName": "AllTraffic"}
        assert "PredefinedMetricSpecification" not in policy  # not ConcurrentRequestsPerModel


def test_cpu_variant_scales_on_cpu_utilization_only(cpu):
    assert {m: p["TargetValue"] for m, p in tracked(cpu).items()} == {"CPUUtilization": 240}


def test_scale_out_is_quick_and_scale_in_slow(default, cpu):
    for policy in [*tracked(default).values(), *tracked(cpu).values()]:
        assert policy["ScaleOutCooldown"] == 120
        # After one scale-in, the next waits 15 minutes (on top of target tracking's own
        # 15 minutes of low load before the first): sessions still speaking keep their instance.
        assert policy["ScaleInCooldown"] == 900
        assert not policy.get("DisableScaleIn", False)


def test_context_sets_instance_type_counts_and_bounds(synth):
    custom = synth(instanceType="ml.g6.2xlarge", initialInstanceCount="2", minInstanceCount="2",
                   maxInstanceCount="6", targetUtilizationPercent="50")
    [variant] = custom.one("Endpoint", "AWS::SageMaker::EndpointConfig")["ProductionVariants"]
    assert (variant["InstanceType"], variant["InitialInstanceCount"]) == ("ml.g6.2xlarge", 2)
    target = custom.one("Endpoint", "AWS::ApplicationAutoScaling::ScalableTarget")
    assert (target["MinCapacity"], target["MaxCapacity"]) == (2, 6)
    assert {m: p["TargetValue"] for m, p in tracked(custom).items()} == {
        "GPUUtilization": 50, "CPUUtilization": 400}  # 8 vCPUs


def alarms_by_metric(synth) -> dict[str, dict]:
    return {a["Properties"]["MetricName"]: a["Properties"]
            for a in synth.resources("Endpoint", "AWS::CloudWatch::Alarm").values()}


def test_alarm_thresholds(default):
    alarms = alarms_by_metric(default)
    assert set(alarms) == {"Invocation5XXErrors", "InvocationModelErrors", "ModelLatency"}
    for name in ("Invocation5XXErrors", "InvocationModelErrors"):
        assert (alarms[name]["Statistic"], alarms[name]["Threshold"], alarms[name]["Period"]) == ("Sum", 5, 300)
    latency = alarms["ModelLatency"]
    assert (latency["ExtendedStatistic"], latency["Threshold"]) == ("p90", 5_000_000)  # microseconds
    assert latency["EvaluationPeriods"] == 3
    for alarm in alarms.values():
        assert alarm["TreatMissingData"] == "notBreaching"
        assert {d["Name"]: d["Value"] for d in alarm["Dimensions"]} == {
            "EndpointName": "kokoro-tts-endpoint", "VariantName": "AllTraffic"}
        assert "AlarmActions" not in alarm  # no topic configured


def test_alarm_topic_from_context_gets_alarm_and_ok_actions(synth):
    alarms = alarms_by_metric(synth(alarmTopicArn=TOPIC, modelLatencyAlarmMs="1500"))
    for alarm in alarms.values():
        assert alarm["AlarmActions"] == [TOPIC]
        assert alarm["OKActions"] == [TOPIC]
    assert alarms["ModelLatency"]["Threshold"] == 1_500_000


def test_outputs_name_the_endpoint_and_the_invoker_policy(default):
    outputs = default.templates["Endpoint"]["Outputs"]
    assert outputs["EndpointName"]["Value"] == "kokoro-tts-endpoint"
    assert "Fn::GetStackOutput" in outputs["InvokerPolicyArn"]["Value"]  # from the foundation stack
    assert outputs["InvokerPolicyArn"]["Value"]["Fn::GetStackOutput"]["StackName"] == "kokoro-tts-foundation"


@pytest.mark.parametrize("stack,depends_on", [("ModelCache", {"Foundation"}), ("Endpoint", {"Foundation", "ModelCache"})])
def test_stack_dependencies_are_explicit(default, stack, depends_on):
    assert default.depends_on(stack) == depends_on
