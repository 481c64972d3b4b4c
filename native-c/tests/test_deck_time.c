/*
 * deck_ms_until, the milliseconds every poll and wait of libdeck is given until a deadline: rounded
 * up, so that a wait that long never ends before its deadline (one rounded down ended up to a
 * millisecond early and its caller looked again and again until the deadline, a spin), 0 once
 * the deadline has passed, and right for deadlines days away.
 */
#include <stdio.h>
#include <time.h>
#include "util_deck.h"
#include "../deck/internal.h"

static struct timespec from_now_us(long us)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return deck_time_after(&now, us);
}

int main(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    CHECK(deck_ms_until(&now) == 0);                             /* now has passed once it is read */
    struct timespec past = now;
    past.tv_sec -= 5;
    CHECK(deck_ms_until(&past) == 0);

    /* Days away (a long timeout): the value is right, not overflowed. The time this process
     * may lose between the two clock reads only lowers it, so the bound below allows a second. */
    const long days20 = 20L * 24 * 3600 * 1000;
    struct timespec d = from_now_us(0);
    d.tv_sec += 20L * 24 * 3600;
    long far = deck_ms_until(&d);
    CHECK(far <= days20 && far > days20 - 1000);

    /* Waiting what it says reaches the deadline, for deadlines that are not whole milliseconds
     * (rounded down, 100 us gave 0 and 850 us gave 0: the wait ended before the deadline). Time
     * lost to the scheduler only brings the deadline nearer, so this cannot fail by chance. */
    for (long us = 100; us <= 3100; us += 750) {
        d = from_now_us(us);
        util_sleep_ms((int)deck_ms_until(&d));
        CHECK(deck_deadline_passed(&d));
    }
    printf("PASS test_deck_time\n");
    return 0;
}
