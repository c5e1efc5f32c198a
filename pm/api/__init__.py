"""The PM layer's API: the fleet's quality (issue #29), PMs only, read-only."""
