-- The lock log (db-lock.history.enabled): one row per hold a JVM took in the database,
-- closed with how it ended. Written off the callers' path; kept for db-lock.history.retention.
CREATE TABLE ${table}_history (
    id          BIGINT       NOT NULL AUTO_INCREMENT,
    lock_key    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    mode        VARCHAR(16)  NOT NULL,
    owner       VARCHAR(128) NOT NULL,
    token       BIGINT       NULL,
    acquired_at DATETIME(6)  NOT NULL COMMENT 'UTC',
    released_at DATETIME(6)  NULL COMMENT 'UTC',
    outcome     VARCHAR(16)  NULL,
    PRIMARY KEY (id),
    KEY ${table}_history_holder_idx (lock_key, owner),
    KEY ${table}_history_acquired_idx (acquired_at)
) ENGINE = InnoDB;
