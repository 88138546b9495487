-- The read/write modes. ${table}_rw: one row per holder, reader ('R') or writer ('W'), each
-- with its own lease (UTC) and a fencing token from AUTO_INCREMENT, drawn when the row is
-- inserted (a writer's row is inserted only once no reader holds the key), so that tokens
-- increase per key across readers and writers. ${table}_rw_intents: the one writer of a key
-- that waits for it or holds it, with a lease renewed while it waits; a live intent keeps new
-- readers out (write preference).
CREATE TABLE ${table}_rw (
    lock_key    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    owner       VARCHAR(128) NOT NULL,
    token       BIGINT       NOT NULL AUTO_INCREMENT,
    kind        CHAR(1)      NOT NULL,
    acquired_at DATETIME(6)  NOT NULL COMMENT 'UTC',
    expires_at  DATETIME(6)  NOT NULL COMMENT 'UTC',
    PRIMARY KEY (lock_key, owner),
    KEY ${table}_rw_token_idx (token),
    KEY ${table}_rw_expires_idx (expires_at)
) ENGINE = InnoDB;

CREATE TABLE ${table}_rw_intents (
    lock_key   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    owner      VARCHAR(128) NOT NULL,
    expires_at DATETIME(6)  NOT NULL COMMENT 'UTC',
    PRIMARY KEY (lock_key),
    KEY ${table}_rw_intents_expires_idx (expires_at)
) ENGINE = InnoDB;
