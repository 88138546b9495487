package io.github.dblock.sample;

import java.math.BigDecimal;

/**
 * Proof of payment of an order: the same for every request that pays the order.
 *
 * @param orderId the order's id
 * @param amount the amount charged
 * @param paymentRef the payment provider's reference of the one charge
 */
public record Receipt(long orderId, BigDecimal amount, String paymentRef) {
}
