"""Properties of the model: the invariant catalogue and the engines that check it."""
