-- A few unpaid orders; kept as they are when already there (a MariaDB or MySQL database).
INSERT INTO sample_orders (id, amount, status, charge_count)
SELECT 1, 19.99, 'UNPAID', 0 FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM sample_orders WHERE id = 1);
INSERT INTO sample_orders (id, amount, status, charge_count)
SELECT 2, 120.00, 'UNPAID', 0 FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM sample_orders WHERE id = 2);
INSERT INTO sample_orders (id, amount, status, charge_count)
SELECT 3, 7.50, 'UNPAID', 0 FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM sample_orders WHERE id = 3);
