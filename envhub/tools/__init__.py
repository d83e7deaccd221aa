"""What uses environments: ``rollout`` (the one rollout), ``render`` (``record`` to GIF/MP4/HTML) and
``bench`` (throughput, as ``envhub bench`` measures it)."""
