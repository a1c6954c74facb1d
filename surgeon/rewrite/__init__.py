"""Pattern authoring API, the rewrite driver, the report and plugin discovery."""
