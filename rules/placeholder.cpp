// Placeholder so the rules library has a source until its first real file lands; delete then.
