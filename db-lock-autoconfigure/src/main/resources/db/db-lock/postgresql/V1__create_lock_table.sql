-- Fencing tokens come from a sequence: they keep increasing after a row is deleted and
-- after a restart.
CREATE SEQUENCE ${table}_token_seq;

CREATE TABLE ${table} (
    lock_key    VARCHAR(255) NOT NULL PRIMARY KEY,
    owner       VARCHAR(128) NOT NULL,
    token       BIGINT       NOT NULL,
    acquired_at TIMESTAMPTZ  NOT NULL,
    expires_at  TIMESTAMPTZ  NOT NULL
);

CREATE INDEX ${table}_expires_idx ON ${table} (expires_at);
