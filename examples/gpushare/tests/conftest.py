"""The package's tests: the fixtures kubesched gives plugin authors (both anyio backends, in
virtual time), imported so the tests run from the package's folder and from kubesched's suite."""

from kubesched.pytest_plugin import anyio_backend, temporary_plugin

__all__ = ["anyio_backend", "temporary_plugin"]
