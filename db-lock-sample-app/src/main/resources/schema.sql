-- The application's own table; db-lock's lock table is created by db-lock's migration.
CREATE TABLE IF NOT EXISTS sample_orders (
    id           BIGINT        NOT NULL PRIMARY KEY,
    amount       DECIMAL(12,2) NOT NULL,
    status       VARCHAR(16)   NOT NULL,
    charge_count INT           NOT NULL,
    payment_ref  VARCHAR(64),
    -- the fencing token of the last lock holder that wrote the order: an older holder's write is refused
    fence        BIGINT        NOT NULL DEFAULT 0
);
