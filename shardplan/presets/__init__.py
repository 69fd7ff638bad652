"""Built-in presets: models (:mod:`.models`) and hardware (:mod:`.hardware`)."""
