"""What runs in a worker: a pack of units, their lifecycles, input loading, staging."""
