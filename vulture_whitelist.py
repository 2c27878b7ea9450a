"""Names vulture (``make lint``) cannot see used: each is called or read by a framework or by a
caller outside the package. Click commands are found by their decorator (pyproject.toml,
``[tool.vulture] ignore_decorators``). Anything else unused is dead code: delete it, or move a
helper only the tests call into ``tests/``."""

from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# Module attributes Python looks up (PEP 562): the lazy exports of arklow_pulumi and its store.
_.__getattr__
_.__dir__

# click: a group's command lookup, a parameter type's conversion (and its arguments).
_.get_command
_.convert
_.param

# PyYAML: a constructor's arguments (the loader it is called with).
_.loader

# uvicorn: the server's exit flag and its signal handling, replaced by the controller's own.
_.should_exit
_.capture_signals

# http.server: the Compute API test server's handler hooks and settings.
_.daemon_threads
_.protocol_version
_.log_message
_.close_connection
_.do_DELETE
_.do_GET
_.do_PATCH
_.do_POST
_.do_PUT

# Pulumi: a dynamic provider's diff.
_.diff

# pydantic: a model's configuration and its validators.
_.model_config
_._null_means_default

# SQLAlchemy and the DB-API: a mapped column written by table inserts, a connection's setting.
_.observed_at
_.group_name  # a scale target's group name, mapped by the field table (core/fields.py)
_.isolation_level

# Alembic: every migration's revision links and its downgrade.
_.down_revision
_.branch_labels
_.downgrade

# google-cloud-compute: a request's page token, set on the request object.
_.page_token

# Fields of values the package hands its callers, read by them, the tests and the benchmarks.
_.cycles  # the lane client: its completed background cycles
_.saturated  # a filling's saturated lanes, as the kernel returns them
_.describe_calls  # a reconciliation pass's report (docs/supply.md) and the router: calls made
_.set_calls
_.converged

# uvicorn's h11 protocol: a malformed request's answer (the project's JSON 400), and the flag its
# request cycle reads when the connection layer ends a stalled body.
_.send_400_response
_.disconnected

# core.topology.FrozenMap: dict's mutating methods, overridden to refuse (Python calls them).
_.popitem
