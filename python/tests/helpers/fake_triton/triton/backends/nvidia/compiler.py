class CUDABackend:
    def add_stages(self, stages, options, language=None):
        for ext in ("ttir", "ttgir", "llir", "ptx", "cubin"):
            stages[ext] = lambda src, metadata, ext=ext: f"{src}.{ext}"
