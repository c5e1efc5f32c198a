"""The PM's pages, one module per area; `pm/urls.py` joins them."""
