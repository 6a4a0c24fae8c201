// Placeholder so the net library has a source until its first real file lands; delete then.
