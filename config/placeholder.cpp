// Placeholder so the config library has a source until its first real file lands; delete then.
