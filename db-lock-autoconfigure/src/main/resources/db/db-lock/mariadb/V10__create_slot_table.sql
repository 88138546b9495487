-- Scheduled jobs run at most once per slot (@OncePerSlot): one row per slot of a task, the
-- slot being the nominal fire time of its schedule nearest to the database's now when a node
-- ran it. The first node to insert the row runs the slot; another finds the primary key taken
-- and skips it. claimed_at is the database's time of the claim. Rows older than
-- db-lock.scheduling.retention before a task's newest slot are deleted by the claims.
-- task compares byte for byte and without padding, as lock_key does.
CREATE TABLE ${table}_slot (
    task       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    slot_at    DATETIME(6)  NOT NULL COMMENT 'UTC',
    owner      VARCHAR(128) NOT NULL,
    claimed_at DATETIME(6)  NOT NULL COMMENT 'UTC',
    PRIMARY KEY (task, slot_at)
) ENGINE = InnoDB;
