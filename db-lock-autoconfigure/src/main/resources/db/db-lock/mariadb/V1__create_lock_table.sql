-- Fencing tokens come from a sequence: they keep increasing after a row is deleted and
-- after a restart (a restart skips ahead by the sequence's cache, never back).
CREATE SEQUENCE ${table}_token_seq;

-- lock_key compares byte for byte and without padding: 'Order-1', 'order-1' and
-- 'order-1 ' are three different locks.
CREATE TABLE ${table} (
    lock_key    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    owner       VARCHAR(128) NOT NULL,
    token       BIGINT       NOT NULL,
    acquired_at DATETIME(6)  NOT NULL COMMENT 'UTC',
    expires_at  DATETIME(6)  NOT NULL COMMENT 'UTC',
    PRIMARY KEY (lock_key),
    KEY ${table}_expires_idx (expires_at)
) ENGINE = InnoDB;
