# The docs site (mkdocs.yml, docs/): built strictly, so a broken link or page fails.
.PHONY: docs docs-serve reference

DOCS_ADDR ?= 127.0.0.1:8000
# The theme prints its end-of-life notice on every build otherwise.
export NO_MKDOCS_2_WARNING := 1

docs: setup
	$(PY) -m mkdocs build --strict

docs-serve: setup
	$(PY) -m mkdocs serve --strict --dev-addr $(DOCS_ADDR)

# Rewrite every generated reference block (a test fails on each that drifts).
reference: setup
	$(PY) scripts/settings_tables.py
	$(PY) scripts/cdk_context_table.py
	$(PY) scripts/error_codes_table.py
	$(PY) scripts/chunker_tables.py
