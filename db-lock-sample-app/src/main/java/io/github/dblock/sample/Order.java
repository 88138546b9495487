package io.github.dblock.sample;

import java.math.BigDecimal;

import org.jspecify.annotations.Nullable;

/**
 * An order, as stored in the {@code sample_orders} table.
 *
 * @param id the order's id
 * @param amount the amount to charge
 * @param status whether it is paid
 * @param chargeCount how many times the payment provider charged it: 1 once paid, never more
 * @param paymentRef the payment provider's reference, {@code null} until paid
 */
public record Order(long id, BigDecimal amount, OrderStatus status, int chargeCount, @Nullable String paymentRef) {
}
