// The loopback server arrives in the next commit.
