// Placeholder so the notifier library has a source until its first real file lands; delete then.
