"""The analyses behind the commands, each built on the model and the engines."""
