"""The controller's HTTP API: the Starlette app, its bodies and their shapes, the OpenAPI document,
the request guard and tokens, the demand intake and its group commit, and the metrics text."""
