// Hourly downsampling of Sidewalk Watch readings (InfluxDB 2 task).
// A PLAN, not run here. Raw points stay 90 days in "sidewalk"; the hourly
// mean/min/max per device, stream and field are kept 10 years in "sidewalk_1h".
option task = {name: "sidewalk-downsample-1h", every: 1h, offset: 10m}

raw = from(bucket: "sidewalk")
    |> range(start: -task.every)
    |> filter(fn: (r) => r._value is float or r._value is int)
    |> toFloat()

agg = (fn, suffix) => raw
    |> aggregateWindow(every: 1h, fn: fn, createEmpty: false)
    |> map(fn: (r) => ({r with _field: r._field + suffix}))
    |> to(bucket: "sidewalk_1h", org: "county")

agg(fn: mean, suffix: "_mean")
agg(fn: min, suffix: "_min")
agg(fn: max, suffix: "_max")
