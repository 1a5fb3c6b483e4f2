package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Timeouts and retries DialRedis gives a client whose URL sets none: a
// Redis that does not answer must cost a request milliseconds, not
// go-redis's seconds, since WithFallback then serves it from memory.
const (
	redisTimeout    = 250 * time.Millisecond
	redisMaxRetries = 1
)

// DialRedis returns a client for url (redis://[user:password@]host:port/db,
// or rediss:// for TLS; go-redis's query options such as dial_timeout
// apply). It does not connect until the client is first used.
func DialRedis(url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: redis URL: %w", err)
	}
	if opt.DialTimeout == 0 {
		opt.DialTimeout = redisTimeout
	}
	if opt.ReadTimeout == 0 {
		opt.ReadTimeout = redisTimeout
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = redisTimeout
	}
	if opt.MaxRetries == 0 {
		opt.MaxRetries = redisMaxRetries
	}
	if opt.DialerRetries == 0 {
		opt.DialerRetries = redisMaxRetries
	}
	return redis.NewClient(opt), nil
}

// Redis is a Limiter whose budgets live in Redis, so that every process
// using the same Redis and prefix spends one budget per client. Each
// Spend is one atomic script run on Redis's clock; a budget's key expires
// when the budget is whole again.
type Redis struct {
	limit  redis_rate.Limit
	prefix string
	rl     *redis_rate.Limiter
	rdb    redis.UniversalClient
}

// NewRedis returns a Limiter of limit points per hour whose budgets live in
// rdb under keys starting "rate:"+prefix.
func NewRedis(rdb redis.UniversalClient, prefix string, limit int) (*Redis, error) {
	if err := checkLimit(limit); err != nil {
		return nil, err
	}
	return &Redis{limit: redis_rate.PerHour(limit), prefix: prefix, rl: redis_rate.NewLimiter(rdb), rdb: rdb}, nil
}

// Spend implements Limiter.
func (r *Redis) Spend(ctx context.Context, key string, cost int) (Result, error) {
	return spendChecked(ctx, key, cost, r.limit.Burst, r.spend)
}

func (r *Redis) spend(ctx context.Context, key string, cost int) (Result, error) {
	res, err := r.rl.AllowN(ctx, r.prefix+key, r.limit, cost)
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: redis: %w", err)
	}
	// redis_rate's Allowed is the number of points spent: 0 for a read.
	allowed := cost == 0 || res.Allowed > 0
	remaining := res.Remaining
	if !allowed {
		// A refusal reports 0 remaining; what does remain is the part of
		// the budget that the unchanged reset time leaves unspent.
		perPoint := r.limit.Period / time.Duration(r.limit.Rate)
		remaining = int((time.Duration(r.limit.Burst)*perPoint - res.ResetAfter) / perPoint)
	}
	return newResult(r.limit.Burst, remaining, allowed, res.ResetAfter, res.RetryAfter, time.Now()), nil
}

// adjust moves a budget's arrival time, kept as redis_rate keeps it
// (seconds since 2017 under "rate:"+key, on Redis's clock), by ARGV[1]
// points of ARGV[2] seconds each, never before now; it returns the
// seconds until the budget is whole.
var adjust = redis.NewScript(`
redis.replicate_commands()
local now = redis.call("TIME")
now = (now[1] - 1483228800) + (now[2] / 1000000)
local tat = tonumber(redis.call("GET", KEYS[1]) or now)
local next = math.max(math.max(tat, now) + tonumber(ARGV[1]) * tonumber(ARGV[2]), now)
local ahead = next - now
if ahead > 0 then
  redis.call("SET", KEYS[1], next, "EX", math.ceil(ahead))
else
  redis.call("DEL", KEYS[1])
end
return tostring(ahead)
`)

// Adjust implements Limiter.
func (r *Redis) Adjust(ctx context.Context, key string, delta int) (Result, error) {
	every := r.limit.Period / time.Duration(r.limit.Rate)
	s, err := adjust.Run(ctx, r.rdb, []string{"rate:" + r.prefix + key}, delta, every.Seconds()).Text()
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: redis: %w", err)
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: redis: %w", err)
	}
	ahead := time.Duration(secs * float64(time.Second))
	remaining := int((time.Duration(r.limit.Burst)*every - ahead) / every)
	return newResult(r.limit.Burst, remaining, true, ahead, -1, time.Now()), nil
}
