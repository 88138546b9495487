-- The transaction and named modes. ${table}_keys: one row per key locked in the
-- transaction mode, which it locks (SELECT ... FOR UPDATE); rows stay after the lock ends.
-- ${table}_key_tokens: each key's fencing-token counters of the two modes (MySQL has no
-- sequences), counted when read in statements of their own that commit at once, so that a
-- holder whose transaction rolls back, or who dies, never gives a token back. Deleting a row
-- of it restarts its key's tokens: never delete rows of keys still in use.
CREATE TABLE ${table}_keys (
    lock_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin NOT NULL,
    PRIMARY KEY (lock_key)
) ENGINE = InnoDB;

CREATE TABLE ${table}_key_tokens (
    lock_key    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin NOT NULL,
    token       BIGINT       NOT NULL DEFAULT 0,
    named_token BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (lock_key)
) ENGINE = InnoDB;
