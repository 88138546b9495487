-- One row per key locked in the transaction or named mode, kept after the lock ends: the
-- transaction mode locks the row itself (SELECT ... FOR UPDATE), and both modes count their
-- fencing tokens on it (token, named_token), so that tokens keep increasing per key. Deleting
-- a row restarts its key's tokens: never delete rows of keys still in use.
CREATE TABLE ${table}_keys (
    lock_key    VARCHAR(255) NOT NULL PRIMARY KEY,
    token       BIGINT       NOT NULL DEFAULT 0,
    named_token BIGINT       NOT NULL DEFAULT 0
);
