"""The HTTP server: JSON API and an SSE stream of snapshots from the durable event log."""
