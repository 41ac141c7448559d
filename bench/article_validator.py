"""The source article's validator, `validate_config`, as written there, with a timing server.

The benchmark (bench/validator-speed.ts) times it together with the TypeScript
validator, in interleaved rounds. Protocol, one JSON object per line:

  stdin, first line:  {"valid": [...], "invalid": [...]}
  stdout:             READY {"python": ..., "jsonschema": ..., "verdicts": [...]}   (every input checked once)
  stdin, then:        {"fn": "article_valid" | "article_invalid" | "compiled_valid" | "compiled_invalid", "passes": N}
  stdout:             {"cpu_ns": ..., "wall_ns": ...}   per call: N passes over the group's inputs,
                      CPU time from time.process_time_ns() (the process's user + system time, as
                      Node's process.cpuUsage() on the other side), wall time beside it

For context it also times jsonschema with a validator compiled once
(`Draft202012Validator(schema)` + `best_match`), which is not the article's code:
`jsonschema.validate` checks the schema itself and picks a validator class on
every call.
"""
import json
import platform
import sys
import time
from importlib.metadata import version

from jsonschema import Draft202012Validator, ValidationError, validate
from jsonschema.exceptions import best_match

DEPLOYMENT_CONFIG_SCHEMA = {
    "type": "object",
    "required": ["service_name", "replicas", "resources", "health_check"],
    "properties": {
        "service_name": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 20},
        "resources": {
            "type": "object",
            "required": ["cpu_limit", "memory_limit_mb"],
            "properties": {
                "cpu_limit": {"type": "number", "minimum": 0.1, "maximum": 8.0},
                "memory_limit_mb": {"type": "integer", "minimum": 128, "maximum": 16384},
            },
        },
        "health_check": {
            "type": "object",
            "required": ["path", "timeout_seconds", "interval_seconds"],
            "properties": {
                "path": {"type": "string", "pattern": "^/"},
                "timeout_seconds": {"type": "integer", "minimum": 1},
                "interval_seconds": {"type": "integer", "minimum": 5},
            },
        },
    },
}


# The validator: your REAL source of truth. This is the hard part.
def validate_config(config: dict) -> tuple[bool, list[str]]:
    """Schema validation + business rules. This IS your spec."""
    errors = []
    try:
        validate(instance=config, schema=DEPLOYMENT_CONFIG_SCHEMA)
    except ValidationError as e:
        errors.append(f"Schema: {e.message} (at {list(e.path)})")
        return False, errors  # bail early — no point checking rules on broken structure

    # Cross-field rules that JSON Schema can't express
    if config["replicas"] > 5 and config["resources"]["cpu_limit"] < 1.0:
        errors.append(f"replicas={config['replicas']} requires cpu_limit >= 1.0")
    if config["health_check"]["timeout_seconds"] >= config["health_check"]["interval_seconds"]:
        errors.append("timeout_seconds must be < interval_seconds")

    return len(errors) == 0, errors


COMPILED = Draft202012Validator(DEPLOYMENT_CONFIG_SCHEMA)


def validate_config_compiled(config):
    """Same checks with the validator built once (the article builds it on every call)."""
    error = best_match(COMPILED.iter_errors(config))
    if error is not None:
        return False, [f"Schema: {error.message} (at {list(error.path)})"]
    errors = []
    if config["replicas"] > 5 and config["resources"]["cpu_limit"] < 1.0:
        errors.append(f"replicas={config['replicas']} requires cpu_limit >= 1.0")
    if config["health_check"]["timeout_seconds"] >= config["health_check"]["interval_seconds"]:
        errors.append("timeout_seconds must be < interval_seconds")
    return len(errors) == 0, errors


def timed(fn, inputs, passes):
    """Per-call CPU and wall time of `passes` passes over `inputs`, in nanoseconds."""
    wall0 = time.perf_counter_ns()
    cpu0 = time.process_time_ns()
    for _ in range(passes):
        for config in inputs:
            fn(config)
    cpu = time.process_time_ns() - cpu0
    wall = time.perf_counter_ns() - wall0
    calls = max(1, passes * len(inputs))
    return {"cpu_ns": cpu / calls, "wall_ns": wall / calls}


def main():
    payload = json.loads(sys.stdin.readline())
    groups = {"valid": payload.get("valid", []), "invalid": payload.get("invalid", [])}
    verdicts = []
    for config in groups["valid"] + groups["invalid"]:
        try:
            ok, errors = validate_config(config)
        except Exception as e:  # the article's code indexes into the config after the schema passes
            ok, errors = False, [f"{type(e).__name__}: {e}"]
        verdicts.append({"valid": ok, "errors": errors})
    ready = {"python": platform.python_version(), "jsonschema": version("jsonschema"), "verdicts": verdicts}
    sys.stdout.write("READY " + json.dumps(ready) + "\n")
    sys.stdout.flush()
    functions = {"article": validate_config, "compiled": validate_config_compiled}
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        kind, group = command["fn"].split("_", 1)
        sys.stdout.write(json.dumps(timed(functions[kind], groups[group], int(command["passes"]))) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
