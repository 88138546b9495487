-- Fencing tokens come from AUTO_INCREMENT, which MariaDB persists across restarts (10.2.4
-- and later): they keep increasing after a row is deleted.
-- lock_key compares byte for byte and without padding: 'Order-1', 'order-1' and
-- 'order-1 ' are three different locks.
CREATE TABLE ${table} (
    lock_key    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    owner       VARCHAR(128) NOT NULL,
    token       BIGINT       NOT NULL AUTO_INCREMENT,
    acquired_at DATETIME(6)  NOT NULL COMMENT 'UTC',
    expires_at  DATETIME(6)  NOT NULL COMMENT 'UTC',
    PRIMARY KEY (lock_key),
    KEY ${table}_token_idx (token),
    KEY ${table}_expires_idx (expires_at)
) ENGINE = InnoDB;
