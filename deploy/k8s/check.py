#!/usr/bin/env python3
"""Check deploy/k8s: every manifest against the Kubernetes schema (kubernetes-validate
--strict: unknown fields are errors), and every pod template against the restricted Pod
Security Standard (the checks the API server applies to a namespace labelled
pod-security.kubernetes.io/enforce=restricted). Exit 1 with the reasons on any failure.

    pip install kubernetes-validate && python3 deploy/k8s/check.py
"""
import pathlib
import subprocess
import sys

import yaml

HERE = pathlib.Path(__file__).resolve().parent
ALLOWED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}


def pod_specs(document):
    kind = document.get("kind")
    spec = document.get("spec", {})
    if kind == "Pod":
        yield spec
    elif kind in {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}:
        yield spec["template"]["spec"]
    elif kind == "CronJob":
        yield spec["jobTemplate"]["spec"]["template"]["spec"]


def restricted_problems(name, pod):
    problems = []
    pod_context = pod.get("securityContext", {})
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(flag):
            problems.append(f"{name}: {flag} is set")
    for volume in pod.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= ALLOWED_VOLUMES:
            problems.append(f"{name}: volume {volume['name']} of type {sorted(kinds)}")
    containers = pod.get("initContainers", []) + pod.get("containers", [])
    for container in containers:
        where = f"{name}/{container['name']}"
        context = container.get("securityContext", {})
        merged = {**pod_context, **context}
        if not merged.get("runAsNonRoot"):
            problems.append(f"{where}: runAsNonRoot is not true")
        if merged.get("runAsUser") == 0:
            problems.append(f"{where}: runAsUser is 0")
        seccomp = merged.get("seccompProfile", {}).get("type")
        if seccomp not in {"RuntimeDefault", "Localhost"}:
            problems.append(f"{where}: seccompProfile.type is {seccomp!r}, not RuntimeDefault or Localhost")
        if context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{where}: allowPrivilegeEscalation is not false")
        if context.get("privileged"):
            problems.append(f"{where}: privileged")
        capabilities = context.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []):
            problems.append(f"{where}: capabilities do not drop ALL")
        if set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}:
            problems.append(f"{where}: adds capabilities {capabilities['add']}")
        for port in container.get("ports", []):
            if port.get("hostPort"):
                problems.append(f"{where}: hostPort {port['hostPort']}")
    return problems


def serving_problems(name, document):
    """What a Deployment of the service needs beyond the restricted level: probes over the gRPC
    health protocol (startup, readiness, and liveness on its own service name), replicas spread
    over nodes, and a selector that picks the server's pods only (not the migration Job's)."""
    if document.get("kind") != "Deployment":
        return []
    problems = []
    spec = document["spec"]
    pod = spec["template"]["spec"]
    for container in pod.get("containers", []):
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            if "grpc" not in container.get(probe, {}):
                problems.append(f"{name}/{container['name']}: {probe} does not use the gRPC health protocol")
        if container.get("livenessProbe", {}).get("grpc", {}).get("service") in (None, ""):
            problems.append(f"{name}/{container['name']}: liveness asks the whole server (a database outage would restart it)")
    keys = {constraint.get("topologyKey") for constraint in pod.get("topologySpreadConstraints", [])}
    if "kubernetes.io/hostname" not in keys:
        problems.append(f"{name}: no topology spread over nodes")
    if "app.kubernetes.io/component" not in spec["selector"].get("matchLabels", {}):
        problems.append(f"{name}: the selector would also match the migration Job's pods")
    return problems


def main():
    manifests = sorted(p for p in HERE.glob("*.yaml") if p.name != "kustomization.yaml")
    schema = subprocess.run(["kubernetes-validate", "--strict", *map(str, manifests)], capture_output=True, text=True)
    sys.stdout.write(schema.stdout + schema.stderr)
    problems = [] if schema.returncode == 0 else ["kubernetes-validate --strict failed"]
    namespaces = 0
    for manifest in manifests:
        for document in yaml.safe_load_all(manifest.read_text()):
            if not document:
                continue
            if document.get("kind") == "Namespace":
                labels = document.get("metadata", {}).get("labels", {})
                if labels.get("pod-security.kubernetes.io/enforce") != "restricted":
                    problems.append(f"{manifest.name}: namespace does not enforce the restricted level")
                namespaces += 1
            name = f"{manifest.name}:{document['metadata']['name']}"
            for pod in pod_specs(document):
                problems += restricted_problems(name, pod)
            problems += serving_problems(name, document)
    if namespaces == 0:
        problems.append("no Namespace manifest enforcing the restricted level")
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"{len(manifests)} manifests, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
