#!/bin/sh
# Runs once in the InfluxDB 2 container after its initial setup (see
# docker-compose.yml): the long-term bucket, the downsampling task and a
# write-only token for ingest. A PLAN, not run here.
set -eu
influx bucket create --name sidewalk_1h --org county --retention 3650d
influx task create --org county --file /etc/sidewalk/influx-downsample.flux
bucket_id=$(influx bucket list --org county --name sidewalk --hide-headers | cut -f1)
influx auth create --org county --description "sidewalk ingest (write only)" \
    --write-bucket "$bucket_id"
