"""The source article's validator, `validate_config`, as written there, with a timing harness.

Reads {"valid": [...], "invalid": [...], "round_seconds": S} as JSON on stdin, checks
every input once (verdicts and messages), then times `validate_config` on each group inside Python
(5 rounds of about S seconds; the median round), and prints one JSON object on stdout.

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


def per_call_us(fn, inputs, round_seconds):
    """Median of 5 rounds of about `round_seconds` each, in microseconds per call."""
    if not inputs:
        return None
    start = time.perf_counter_ns()
    for config in inputs:  # warm-up, and a measure of one pass
        fn(config)
    one_pass = max(1, time.perf_counter_ns() - start)
    iterations = max(1, int(round_seconds * 1e9 / one_pass))
    samples = []
    for _ in range(5):
        start = time.perf_counter_ns()
        for _ in range(iterations):
            for config in inputs:
                fn(config)
        samples.append((time.perf_counter_ns() - start) / (iterations * len(inputs)) / 1000)
    samples.sort()
    return samples[len(samples) // 2]


def main():
    payload = json.load(sys.stdin)
    valid_inputs = payload.get("valid", [])
    invalid_inputs = payload.get("invalid", [])
    round_seconds = max(0.0, float(payload.get("round_seconds", 0.2)))
    verdicts = []
    for config in valid_inputs + invalid_inputs:
        try:
            ok, errors = validate_config(config)
        except Exception as e:  # the article's code indexes into the config after the schema passes
            ok, errors = False, [f"{type(e).__name__}: {e}"]
        verdicts.append({"valid": ok, "errors": errors})
    result = {
        "python": platform.python_version(),
        "jsonschema": version("jsonschema"),
        "round_seconds": round_seconds,
        "verdicts": verdicts,
        "valid_us": per_call_us(validate_config, valid_inputs, round_seconds),
        "invalid_us": per_call_us(validate_config, invalid_inputs, round_seconds),
        "compiled_valid_us": per_call_us(validate_config_compiled, valid_inputs, round_seconds),
        "compiled_invalid_us": per_call_us(validate_config_compiled, invalid_inputs, round_seconds),
    }
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
