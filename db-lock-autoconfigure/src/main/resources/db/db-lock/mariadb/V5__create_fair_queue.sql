-- The fair mode: ${table}_fair_queue holds one ticket per waiter or holder, in arrival
-- order; the head of a key's queue whose lease has not ended holds the key. Tickets come
-- from AUTO_INCREMENT, which MariaDB (10.2.4 and later) persists across restarts, drawn while the
-- enqueuing statement holds the key's row of ${table}_fair_keys (FOR UPDATE), so that a
-- key's tickets commit in the order of their numbers. Rows of ${table}_fair_keys stay after
-- their queue empties.
CREATE TABLE ${table}_fair_keys (
    lock_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    PRIMARY KEY (lock_key)
) ENGINE = InnoDB;

CREATE TABLE ${table}_fair_queue (
    ticket     BIGINT       NOT NULL AUTO_INCREMENT,
    lock_key   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    owner      VARCHAR(128) NOT NULL,
    expires_at DATETIME(6)  NOT NULL COMMENT 'UTC',
    PRIMARY KEY (ticket),
    KEY ${table}_fair_queue_key_idx (lock_key, ticket),
    KEY ${table}_fair_queue_expires_idx (expires_at)
) ENGINE = InnoDB;
