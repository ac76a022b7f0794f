# install rules: filled in by the build owner
