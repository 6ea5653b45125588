"""Threadless Python SDK. (The client classes land with the SDK work; `threadless.window` is shared.)"""
