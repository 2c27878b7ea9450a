"""Pulumi dynamic resource providers for Destination, Pool, PoolMembership and ScaleTarget.

Each provider is a class in a module without import-time side effects: Pulumi pickles the instance
with dill by reference, so the provider process re-imports the module. Instances hold only
configuration (``configure`` stores plain strings); store engines are opened per process by URL.
"""
