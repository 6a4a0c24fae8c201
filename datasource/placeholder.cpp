// Placeholder so the datasource library has a source until its first real file lands; delete then.
