"""The package's tests: the fixtures plugin authors get (both anyio backends, virtual time)."""

pytest_plugins = ["kubesched.pytest_plugin"]
