-- The semaphore mode: the number of permits of each semaphore key, recorded by the first
-- caller that uses the key, so that a caller asking for another number is refused. The
-- permits themselves are leases in ${table}, under the keys <key>#permit-<n>. Rows stay
-- after the permits are released; to change a key's number, stop the nodes that use the
-- key (each reads it once) and delete its row.
CREATE TABLE ${table}_semaphore (
    lock_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin NOT NULL,
    permits  INT          NOT NULL,
    PRIMARY KEY (lock_key)
) ENGINE = InnoDB;
