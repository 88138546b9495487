-- The fair mode: ${table}_fair_queue holds one ticket per waiter or holder, in arrival
-- order; the head of a key's queue whose lease has not ended holds the key. Tickets are
-- drawn from ${table}_token_seq (the lease tokens' sequence) while the enqueuing statement
-- holds the key's row of ${table}_fair_keys, so that a key's tickets commit in the order of
-- their numbers. Rows of ${table}_fair_keys stay after their queue empties.
CREATE TABLE ${table}_fair_keys (
    lock_key VARCHAR(255) NOT NULL PRIMARY KEY
);

CREATE TABLE ${table}_fair_queue (
    ticket     BIGINT                      NOT NULL PRIMARY KEY,
    lock_key   VARCHAR(255)                NOT NULL,
    owner      VARCHAR(128)                NOT NULL,
    expires_at TIMESTAMP(6) WITH TIME ZONE NOT NULL
);

CREATE INDEX ${table}_fair_queue_key_idx ON ${table}_fair_queue (lock_key, ticket);
CREATE INDEX ${table}_fair_queue_expires_idx ON ${table}_fair_queue (expires_at);
